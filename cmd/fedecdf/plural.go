package main

import "fmt"

// count writes n and noun, adding an s unless n is one: "1 report",
// "2 reports".
func count(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
