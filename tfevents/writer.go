package tfevents

import (
	"encoding/binary"
	"hash/crc32"
	"io"
	"math"
)

// FileVersion is the version an event file's first event names, as
// TensorFlow's and TensorBoard's writers do.
const FileVersion = "brain.Event:2"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maskedCRC is the TFRecord checksum of b: CRC-32C, rotated right by 15
// bits and offset, so that a CRC of data holding CRCs stays informative.
func maskedCRC(b []byte) uint32 {
	c := crc32.Checksum(b, castagnoli)
	return (c>>15 | c<<17) + 0xa282ead8
}

// Writer writes events to an event file.
type Writer struct{ w io.Writer }

// NewWriter returns a Writer on w after writing the file-version event at
// wallTime (seconds since 1970).
func NewWriter(w io.Writer, wallTime float64) (*Writer, error) {
	ew := &Writer{w: w}
	var ev []byte
	ev = appendDouble(ev, 1, wallTime)
	ev = appendBytes(ev, 3, []byte(FileVersion))
	return ew, ew.record(ev)
}

// Scalar is one named value of a step.
type Scalar struct {
	Tag   string
	Value float64
}

// Scalars writes one event at step and wallTime holding the values as a
// Summary's simple values (float32, as TensorBoard stores them). NaN
// values are left out.
func (w *Writer) Scalars(wallTime float64, step int64, values []Scalar) error {
	var summary []byte
	for _, s := range values {
		if math.IsNaN(s.Value) {
			continue
		}
		var v []byte
		v = appendBytes(v, 1, []byte(s.Tag))
		v = appendFloat(v, 2, float32(s.Value))
		summary = appendBytes(summary, 1, v)
	}
	var ev []byte
	ev = appendDouble(ev, 1, wallTime)
	ev = appendVarint(ev, 2, uint64(step))
	ev = appendBytes(ev, 5, summary)
	return w.record(ev)
}

// record writes data as one TFRecord.
func (w *Writer) record(data []byte) error {
	buf := make([]byte, 12, 16+len(data))
	binary.LittleEndian.PutUint64(buf, uint64(len(data)))
	binary.LittleEndian.PutUint32(buf[8:], maskedCRC(buf[:8]))
	buf = append(buf, data...)
	buf = binary.LittleEndian.AppendUint32(buf, maskedCRC(data))
	_, err := w.w.Write(buf)
	return err
}

// The protocol buffer wire format: a field is its key (number << 3 |
// wire type) as a varint, then its value.
const (
	wireVarint = 0
	wire64     = 1
	wireBytes  = 2
	wire32     = 5
)

func appendKey(b []byte, field, wire int) []byte {
	return binary.AppendUvarint(b, uint64(field<<3|wire))
}

func appendVarint(b []byte, field int, v uint64) []byte {
	return binary.AppendUvarint(appendKey(b, field, wireVarint), v)
}

func appendDouble(b []byte, field int, v float64) []byte {
	return binary.LittleEndian.AppendUint64(appendKey(b, field, wire64), math.Float64bits(v))
}

func appendFloat(b []byte, field int, v float32) []byte {
	return binary.LittleEndian.AppendUint32(appendKey(b, field, wire32), math.Float32bits(v))
}

func appendBytes(b []byte, field int, v []byte) []byte {
	b = binary.AppendUvarint(appendKey(b, field, wireBytes), uint64(len(v)))
	return append(b, v...)
}
