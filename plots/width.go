package plots

import "gonum.org/v1/plot/vg"

// Width is the width of a figure laid out for column c: 7 inches across a
// page (Double), 3.4 inches for one column of two (Single).
func (c Column) Width() vg.Length {
	if c == Single {
		return 3.4 * vg.Inch
	}
	return 7 * vg.Inch
}
