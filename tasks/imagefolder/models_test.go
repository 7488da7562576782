package imagefolder

// The configs of the tests name the built-in models (conv4).
import _ "github.com/trmaml/trmaml/models/builtin"
