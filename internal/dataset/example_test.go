package dataset_test

import (
	"fmt"
	"strings"

	"github.com/fedecdf/fedecdf/internal/dataset"
)

func ExampleReadColumnFrom() {
	csv := "\"age\";\"job\"\n58;\"management\"\n44;\"technician\"\n"
	ages, err := dataset.ReadColumnFrom(strings.NewReader(csv), "bank.csv", "age", 0)
	fmt.Println(ages, err)
	_, err = dataset.ReadColumnFrom(strings.NewReader(csv+"abc;\"x\"\n"), "bank.csv", "age", 0)
	fmt.Println(err)
	// Output:
	// [58 44] <nil>
	// bank.csv:4: column "age": "abc" is not a number
}

func ExampleScoreTable() {
	table := dataset.Synthetic(5000, 1)
	scored, err := dataset.ScoreTable(table, dataset.SyntheticLabel, "", dataset.SplitOptions{Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("trained on %d rows, scored %d test rows\n", scored.TrainSize, scored.TestSize)
	fmt.Println("features:", strings.Join(scored.Encoder.Names(), " "))
	fmt.Printf("first test row: label %d, predicted probability %.3f\n", scored.Labels[0], scored.Scores[0])
	// Output:
	// trained on 3500 rows, scored 1500 test rows
	// features: age income income=<missing> tenure region=west region=east region=south region=north plan=premium plan=basic plan=plus plan=<missing>
	// first test row: label 0, predicted probability 0.095
}
