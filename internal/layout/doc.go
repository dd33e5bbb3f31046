// Package layout holds no code: its tests check the module's package
// layout (which winnow packages each package may import) and that every
// package has a package comment.
package layout
