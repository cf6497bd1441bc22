package dataset

import (
	"bytes"
	"testing"
)

// FuzzReadTable checks that no input makes the readers panic, and that a
// table that reads can be encoded and its first column read as numbers or
// rejected with an error.
func FuzzReadTable(f *testing.F) {
	for _, seed := range []string{smallCSV, "a,b\n1,2\n", "\"x\";\"y\"\n\"1\";2\n", "a\tb\n?\tNA\n", "a,b\n1,\"2\n", ""} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		table, err := readTableFrom(bytes.NewReader(data), "fuzz", 0)
		if err != nil {
			return
		}
		all := make([]int, len(table.Rows))
		for i := range all {
			all[i] = i
		}
		if enc, err := fitEncoder(table, all, encoderOptions{}); err == nil {
			encode, _ := enc.rowEncoder(table, all)
			for r := range all {
				if _, err := encode(r, nil); err != nil {
					t.Fatalf("encoding the rows the encoder was fit on: %v", err)
				}
			}
		}
		_, _ = ReadColumnFrom(bytes.NewReader(data), "fuzz", table.Columns[0], 0)
		_, _, _ = readScoredFrom(bytes.NewReader(data), "fuzz", table.Columns[0], table.Columns[len(table.Columns)-1], "")
	})
}
