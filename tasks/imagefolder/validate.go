package imagefolder

import (
	"fmt"
	"math"
	"path/filepath"

	"github.com/trmaml/trmaml/configs"
)

// Check implements configs.Family: the section's ranges and combinations
// (the model checks itself against the image size). The counts of the data (classes per
// group, images per class) are checked when the folder is read.
func (Family) Check(c configs.Config, k *configs.Checker) {
	s := Section(c)
	const p = "task.imagefolder."
	k.OneOf(p+"layout", s.Layout, Layouts...)
	k.OneOf(p+"resize", s.Resize, Filters...)
	if s.Noun == "" {
		k.Fail(p+"noun", s.Noun, "must name what a task is called, e.g. group, category, superclass")
	}
	if s.Ways < 2 || s.Ways > maxClasses {
		k.Fail(p+"ways", s.Ways, "must be in [2, %d]", maxClasses)
	}
	if s.Channels != 0 && s.Channels != 1 && s.Channels != 3 {
		k.Fail(p+"channels", s.Channels, "must be 1 (greyscale), 3 (colour) or 0 (inferred from the files)")
	}
	h, w := s.Image[0], s.Image[1]
	if (h == 0) != (w == 0) || h < 0 || w < 0 || h > MaxSide || w > MaxSide {
		k.Fail(p+"image", s.Image, "must be [height, width] in [1, %d], or [0, 0] to keep the files' size", MaxSide)
	}
	if s.Rotate || s.RotateEval {
		if h != w {
			k.Fail(p+"rotate", true, "needs square images: task.imagefolder.image = [%d, %d]", h, w)
		}
	}
	checkSplitting(s, k)
}

// checkSplitting checks which of csv, splits, fractions, group_file and
// group_sizes the layout takes, and their values.
func checkSplitting(s *Config, k *configs.Checker) {
	const p = "task.imagefolder."
	refuse := func(field string, set bool, why string) {
		if set {
			k.Fail(p+field, "(set)", "%s", why)
		}
	}
	switch s.Layout {
	case "groups":
		refuse("group_file", s.GroupFile != "", "is for layouts classes and csv: layout groups takes the groups from the folders")
		refuse("group_sizes", !s.GroupSizes.empty(), "is for layouts classes and csv: layout groups takes the groups from the folders")
		refuse("csv", !s.CSV.empty(), "is for layout csv")
	case "classes", "csv":
		if (s.GroupFile == "") == s.GroupSizes.empty() {
			k.Fail(p+"group_file", s.GroupFile, "layout %s needs exactly one of group_file (a class,group CSV) and group_sizes (random groups)", s.Layout)
		}
		if s.Layout == "classes" {
			refuse("csv", !s.CSV.empty(), "is for layout csv")
		}
	}
	if s.Layout == "csv" {
		if len(s.CSV.Train) == 0 || len(s.CSV.Test) == 0 {
			k.Fail(p+"csv", "(train or test empty)", "layout csv needs the split files of train and test (validation may be empty)")
		}
		refuse("splits", !s.Splits.empty(), "does not apply to layout csv: the csv files split the classes")
		refuse("fractions", len(s.Fractions) > 0, "does not apply to layout csv: the csv files split the classes")
		if s.Images == "" || filepath.IsAbs(s.Images) {
			k.Fail(p+"images", s.Images, "must be the images folder under task.imagefolder.dir")
		}
	}
	if !s.GroupSizes.empty() {
		refuse("splits", !s.Splits.empty(), "does not apply with group_sizes: the sizes split the classes")
		refuse("fractions", len(s.Fractions) > 0, "does not apply with group_sizes: the sizes split the classes")
		if len(s.GroupSizes.Train) == 0 || len(s.GroupSizes.Test) == 0 {
			k.Fail(p+"group_sizes", "(train or test empty)", "must give the sizes of the train and test groups")
		}
		for i, sizes := range s.GroupSizes.of() {
			for j, n := range sizes {
				if n < s.Ways || n > maxClasses {
					k.Fail(fmt.Sprintf("%sgroup_sizes.%s[%d]", p, splitNames[i], j), n,
						"must be in [task.imagefolder.ways, %d] = [%d, %d]: an instance takes %d classes of one group", maxClasses, s.Ways, maxClasses, s.Ways)
				}
			}
		}
	}
	if !s.Splits.empty() && len(s.Fractions) > 0 {
		k.Fail(p+"fractions", s.Fractions, "must be empty when task.imagefolder.splits lists the groups")
	}
	if !s.Splits.empty() && (len(s.Splits.Train) == 0 || len(s.Splits.Test) == 0) {
		k.Fail(p+"splits", "(train or test empty)", "must list train and test groups (validation may be empty)")
	}
	if len(s.Fractions) > 0 {
		f := s.Fractions
		ok := len(f) == 3 && f[0] > 0 && f[1] >= 0 && f[2] > 0 && math.Abs(f[0]+f[1]+f[2]-1) < 1e-9
		if !ok {
			k.Fail(p+"fractions", f, "must be [train, validation, test] summing to 1, train and test > 0")
		}
	}
	if s.Layout != "csv" && s.GroupSizes.empty() && s.Splits.empty() && len(s.Fractions) == 0 {
		k.Fail(p+"splits", "(not set)", "layout %s needs splits (the groups of each split) or fractions", s.Layout)
	}
}
