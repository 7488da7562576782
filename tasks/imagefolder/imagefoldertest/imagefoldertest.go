// Package imagefoldertest writes small synthetic image folders in the
// few-shot benchmarks' layouts (mini-ImageNet's CSV splits over an images
// folder, tieredImageNet's with a category file, FC100's class folders with
// a superclass file), for tests that run the built-in configs end to end
// without the benchmarks' data. Every image is distinct and every pixel
// says which group, class and image it belongs to.
package imagefoldertest

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
)

// Pixel is the colour of pixel (x, y) of image j of class c of group g.
func Pixel(g, c, j, x, y int) color.RGBA {
	return color.RGBA{uint8(40*g + c), uint8(11*j + x), uint8(7*y + c), 255}
}

// Image is an h x w image of Pixel, in colour or, if grey, its green
// channel as grey levels.
func Image(g, c, j, h, w int, grey bool) image.Image {
	if grey {
		img := image.NewGray(image.Rect(0, 0, w, h))
		for y := range h {
			for x := range w {
				img.SetGray(x, y, color.Gray{Pixel(g, c, j, x, y).G})
			}
		}
		return img
	}
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetRGBA(x, y, Pixel(g, c, j, x, y))
		}
	}
	return img
}

// WriteImage encodes img at path, as JPEG (quality 95) if path ends in
// .jpg, else as PNG, making its folder.
func WriteImage(path string, img image.Image) error {
	var b bytes.Buffer
	var err error
	if strings.HasSuffix(path, ".jpg") {
		err = jpeg.Encode(&b, img, &jpeg.Options{Quality: 95})
	} else {
		err = png.Encode(&b, img)
	}
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// Split is one CSV split file of a layout: its name and its classes'
// groups (one entry per class, the index of the class's group).
type Split struct {
	File   string
	Groups []int
}

// WriteCSV writes dir in mini-ImageNet's layout: dir/images/LABEL########.jpg,
// perClass side x side colour JPEGs per class, and one "filename,label"
// file per split listing its classes' images. Classes are numbered over
// all splits and labelled n0000NNNN as ImageNet's synsets are; if
// groupFile is not empty, it is written as a "class,group" CSV naming each
// class's group gGG (tieredImageNet's categories).
func WriteCSV(dir string, splits []Split, perClass, side int, groupFile string) error {
	class := 0
	var groups strings.Builder
	groups.WriteString("class,group\n")
	for _, sp := range splits {
		var b strings.Builder
		b.WriteString("filename,label\n")
		for _, g := range sp.Groups {
			label := fmt.Sprintf("n%08d", 2000+class)
			for j := range perClass {
				name := fmt.Sprintf("%s%08d.jpg", label, j)
				if err := WriteImage(filepath.Join(dir, "images", name), Image(g, class, j, side, side, false)); err != nil {
					return err
				}
				fmt.Fprintf(&b, "%s,%s\n", name, label)
			}
			fmt.Fprintf(&groups, "%s,g%02d\n", label, g)
			class++
		}
		if err := os.WriteFile(filepath.Join(dir, sp.File), []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	if groupFile == "" {
		return nil
	}
	return os.WriteFile(filepath.Join(dir, groupFile), []byte(groups.String()), 0o644)
}

// WriteMiniImageNet writes dir as Ravi and Larochelle's mini-ImageNet
// files lay it out: train.csv, val.csv and test.csv of 64, 16 and 20
// classes of perClass 84x84 colour JPEGs (classes in groups of 40 for
// their colours).
func WriteMiniImageNet(dir string, perClass int) error {
	var splits []Split
	class := 0
	for _, sp := range []struct {
		file string
		n    int
	}{{"train.csv", 64}, {"val.csv", 16}, {"test.csv", 20}} {
		s := Split{File: sp.file}
		for range sp.n {
			s.Groups = append(s.Groups, class/40)
			class++
		}
		splits = append(splits, s)
	}
	return WriteCSV(dir, splits, perClass, 84, "")
}

// WriteClasses writes dir as FC100's layout: dir/CLASS/NN.png, perClass
// side x side colour PNGs for each of classes classes of every group,
// classes named GROUP_C, and groupFile, a "class,group" CSV naming each
// class's group.
func WriteClasses(dir string, groups []string, classes, perClass, side int, groupFile string) error {
	var b strings.Builder
	b.WriteString("class,group\n")
	for g, name := range groups {
		for c := range classes {
			class := fmt.Sprintf("%s_%d", name, c)
			fmt.Fprintf(&b, "%s,%s\n", class, name)
			for j := range perClass {
				if err := WriteImage(filepath.Join(dir, class, fmt.Sprintf("%02d.png", j)), Image(g, c, j, side, side, false)); err != nil {
					return err
				}
			}
		}
	}
	return os.WriteFile(filepath.Join(dir, groupFile), []byte(b.String()), 0o644)
}
