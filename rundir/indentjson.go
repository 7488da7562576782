package rundir

import "bufio"

// indentWriter re-formats the compact JSON written to it as
// json.Indent(dst, src, "", "  ") does, as it streams, to w: with
// streamJSON (json.Marshal's bytes) it writes json.MarshalIndent's bytes
// without building them. model.json holds the meta-parameters, 2.8 MB
// indented for the paper's CNN; json.MarshalIndent built it in a growing
// buffer and indented it into a second, the last peak of a training run's
// memory (docs/performance.md). It expects compact input, as json.Marshal
// writes: no whitespace outside strings.
type indentWriter struct {
	w                            *bufio.Writer
	depth                        int
	needIndent, inString, escape bool
}

// Write formats p; errors are w's, reported by its Flush.
func (iw *indentWriter) Write(p []byte) (int, error) {
	for _, c := range p {
		if iw.inString {
			iw.w.WriteByte(c)
			switch {
			case iw.escape:
				iw.escape = false
			case c == '\\':
				iw.escape = true
			case c == '"':
				iw.inString = false
			}
			continue
		}
		if iw.needIndent && c != '}' && c != ']' {
			iw.needIndent = false
			iw.depth++
			iw.newline()
		}
		switch c {
		case '"':
			iw.inString = true
			iw.w.WriteByte(c)
		case '{', '[':
			iw.needIndent = true
			iw.w.WriteByte(c)
		case ',':
			iw.w.WriteByte(c)
			iw.newline()
		case ':':
			iw.w.WriteString(": ")
		case '}', ']':
			if iw.needIndent { // empty: "{}" or "[]"
				iw.needIndent = false
			} else {
				iw.depth--
				iw.newline()
			}
			iw.w.WriteByte(c)
		default:
			iw.w.WriteByte(c)
		}
	}
	return len(p), nil
}

func (iw *indentWriter) newline() {
	iw.w.WriteByte('\n')
	for range iw.depth {
		iw.w.WriteString("  ")
	}
}
