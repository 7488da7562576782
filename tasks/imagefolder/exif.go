package imagefolder

import (
	"bufio"
	"encoding/binary"
	"io"
	"os"
)

// orientations name the EXIF orientation values (TIFF tag 0x0112) other
// than upright (1): what a viewer does to the stored pixels to show them.
var orientations = map[int]string{
	2: "mirrored left to right to view",
	3: "rotated 180 degrees to view",
	4: "mirrored top to bottom to view",
	5: "mirrored along the main diagonal to view",
	6: "rotated 90 degrees clockwise to view",
	7: "mirrored along the other diagonal to view",
	8: "rotated 90 degrees counter-clockwise to view",
}

// exifOrientation is the EXIF orientation of the JPEG at path: the tag of
// its first EXIF block (APP1) before the image data, 1 (upright) when it
// has none or is not a JPEG. The family decodes the pixels as stored, as
// PIL and torchvision's ImageFolder do; data check names the files a
// viewer would show turned.
func exifOrientation(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 1
	}
	defer f.Close()
	r := bufio.NewReader(f)
	var b [4]byte
	if _, err := io.ReadFull(r, b[:2]); err != nil || b[0] != 0xff || b[1] != 0xd8 {
		return 1
	}
	for {
		if _, err := io.ReadFull(r, b[:4]); err != nil || b[0] != 0xff {
			return 1
		}
		marker, n := b[1], int(b[2])<<8|int(b[3])-2
		if marker == 0xda || (marker >= 0xc0 && marker <= 0xcf && marker != 0xc4 && marker != 0xc8 && marker != 0xcc) || n < 0 {
			return 1 // the frame or the data begins: no EXIF block before
		}
		seg := make([]byte, n)
		if _, err := io.ReadFull(r, seg); err != nil {
			return 1
		}
		if marker == 0xe1 && len(seg) > 6 && string(seg[:6]) == "Exif\x00\x00" {
			return tiffOrientation(seg[6:])
		}
	}
}

// tiffOrientation reads tag 0x0112 of the first IFD of the TIFF structure
// t (an EXIF block's body), 1 if it is absent or malformed.
func tiffOrientation(t []byte) int {
	if len(t) < 8 {
		return 1
	}
	var bo binary.ByteOrder
	switch string(t[:2]) {
	case "II":
		bo = binary.LittleEndian
	case "MM":
		bo = binary.BigEndian
	default:
		return 1
	}
	ifd := int64(bo.Uint32(t[4:]))
	if ifd+2 > int64(len(t)) {
		return 1
	}
	entries := int64(bo.Uint16(t[ifd:]))
	for i := range entries {
		e := ifd + 2 + 12*i
		if e+12 > int64(len(t)) {
			return 1
		}
		if bo.Uint16(t[e:]) == 0x0112 && bo.Uint16(t[e+2:]) == 3 { // SHORT
			if o := int(bo.Uint16(t[e+8:])); orientations[o] != "" {
				return o
			}
			return 1
		}
	}
	return 1
}
