package rundir

import (
	"bufio"
	"encoding"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode"
)

// streamJSON writes json.Marshal(v) to w without building it in memory: it
// walks structs, pointers and empty interfaces itself and writes []float64
// values number by number, leaving every other value to json.Marshal. A
// checkpoint of the paper's CNN is 7.5 MB of JSON (weights and Adam's
// moments); encoding/json builds all of it, and its growth, in one buffer,
// which was the peak of a training run's memory (docs/performance.md).
// What it does not walk goes to json.Marshal whole, through its address
// where it has one (as encoding/json calls pointer-receiver marshalers of
// addressable values): values that marshal themselves, non-empty
// interfaces, and structs with embedded fields, tag options other than
// omitempty, names that are not plain or appear twice.
func streamJSON(w *bufio.Writer, v reflect.Value) error {
	switch {
	case !v.IsValid():
		_, err := w.WriteString("null")
		return err
	case customMarshaler(v.Type()):
	case v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface && v.NumMethod() == 0:
		if v.IsNil() {
			_, err := w.WriteString("null")
			return err
		}
		return streamJSON(w, v.Elem())
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Float64 && !customMarshaler(v.Type().Elem()):
		if v.IsNil() {
			_, err := w.WriteString("null")
			return err
		}
		return streamFloats(w, v)
	case v.Kind() == reflect.Struct && walkable(v.Type()):
		return streamStruct(w, v, nil)
	}
	switch {
	case v.CanAddr():
		v = v.Addr()
	case v.Kind() == reflect.Interface: // its own type decides, not its value's
		p := reflect.New(v.Type())
		p.Elem().Set(v)
		v = p
	}
	b, err := json.Marshal(v.Interface())
	if err == nil {
		_, err = w.Write(b)
	}
	return err
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// customMarshaler reports whether t or *t marshals itself.
func customMarshaler(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return t.Implements(jsonMarshaler) || t.Implements(textMarshaler) || p.Implements(jsonMarshaler) || p.Implements(textMarshaler)
}

// walkable reports whether streamStruct encodes t as encoding/json does: no
// embedded fields, no tag options but omitempty, and field names of
// letters, digits, '_' and '-' that appear once.
func walkable(t reflect.Type) bool {
	names := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, comma := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case f.Anonymous || opts != "" && opts != "omitempty":
			return false
		case !f.IsExported() || name == "-" && !comma:
			continue
		case name == "":
			name = f.Name
		}
		if names[name] || strings.TrimFunc(name, plainNameRune) != "" {
			return false
		}
		names[name] = true
	}
	return true
}

func plainNameRune(r rune) bool {
	return r == '_' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// streamStruct writes a walkable struct's exported fields in order, named
// by their json tags, leaving out "-" fields and empty omitempty ones. A
// field named in replace is written as replace's value instead of its own.
func streamStruct(w *bufio.Writer, v reflect.Value, replace map[string]any) error {
	w.WriteByte('{')
	first := true
	for i := range v.NumField() {
		f := v.Type().Field(i)
		name, opts, comma := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" && !comma {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fv := v.Field(i)
		if r, ok := replace[name]; ok {
			fv = reflect.ValueOf(&r).Elem()
		}
		if opts == "omitempty" && emptyValue(fv) {
			continue
		}
		if !first {
			w.WriteByte(',')
		}
		first = false
		key, err := json.Marshal(name)
		if err != nil {
			return err
		}
		w.Write(key)
		w.WriteByte(':')
		if err := streamJSON(w, fv); err != nil {
			return err
		}
	}
	return w.WriteByte('}')
}

// emptyValue is encoding/json's omitempty test.
func emptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// streamFloats writes a float64 slice as encoding/json does: the shortest
// decimal that reads back exactly, in exponent form below 1e-6 and from
// 1e21 on (with at least one exponent digit, not two), and an error for
// NaN and infinities.
func streamFloats(w *bufio.Writer, v reflect.Value) error {
	w.WriteByte('[')
	var buf [32]byte
	for i := range v.Len() {
		f := v.Index(i).Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return &json.UnsupportedValueError{Value: v.Index(i), Str: strconv.FormatFloat(f, 'g', -1, 64)}
		}
		if i > 0 {
			w.WriteByte(',')
		}
		format := byte('f')
		if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
			format = 'e'
		}
		b := strconv.AppendFloat(buf[:0], f, format, -1, 64)
		if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1] // e-07 -> e-7
			b = b[:n-1]
		}
		w.Write(b)
	}
	return w.WriteByte(']')
}
