//go:build !amd64 || purego

package bytespan

func setAVX2(bool) {}
