package config

import (
	"cmp"
	"errors"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// FieldError is one problem found in a configuration file, located by the
// dotted path of the offending key, e.g. "sync.toHost.secrets.all",
// "sync.toHost.customResources[widgets.example.com].enabled" or
// "sync.toHost.pods.translate[0].path". Parse, Load and Validate return
// FieldErrors joined with errors.Join; use errors.As to reach the first one.
type FieldError struct {
	// Path is the dotted path of the key; empty for the document itself.
	Path string
	// Message says what is wrong with the value at Path.
	Message string
}

// Error returns "path: message".
func (e *FieldError) Error() string {
	if e.Path == "" {
		return e.Message
	}
	return e.Path + ": " + e.Message
}

// joinFieldErrors sorts errs by path and joins them, one per line; nil when
// errs is empty.
func joinFieldErrors(errs []*FieldError) error {
	if len(errs) == 0 {
		return nil
	}
	slices.SortStableFunc(errs, func(a, b *FieldError) int {
		return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Message, b.Message))
	})
	joined := make([]error, len(errs))
	for i, e := range errs {
		joined[i] = e
	}
	return errors.Join(joined...)
}

// keyPath is the path of the key named key inside the object at path.
func keyPath(path, key string) string {
	key = printableKey(key)
	if path == "" {
		return key
	}
	return path + "." + key
}

// entryPath is the path of the entry named key inside the map at path.
func entryPath(path, key string) string {
	return path + "[" + printableKey(key) + "]"
}

// printableKey is key, Go-quoted if it is empty (the error would name no
// path) or has a character that is not printable (a line break would split
// a FieldError over two lines).
func printableKey(key string) string {
	if key == "" || strings.ContainsFunc(key, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return strconv.Quote(key)
	}
	return key
}

// indexPath is the path of item i of the list at path.
func indexPath(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}
