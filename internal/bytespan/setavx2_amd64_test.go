//go:build !purego

package bytespan

func setAVX2(on bool) { hasAVX2 = on }
