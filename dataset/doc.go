// Package dataset reads the data the fedecdf tools work on: numeric columns
// of CSV files (scores whose ECDF is released), scored and labelled records
// (for ROC curves and the Hosmer–Lemeshow statistic), and whole tables on
// which a logistic regression is trained to produce those scores, as in
// dp-ecdf §6.
//
// # CSV input
//
// Every CSV input has a header line. The separator is ',', ';' or tab,
// detected from the header line when not given (DetectSeparator), and
// fields may be double-quoted, as in the UCI Bank Marketing file
// ("age";"job";…). Errors name the input, the line and the column, and say
// what is wrong; a missing column lists the columns there are. A numeric
// value must be a finite number: NaN and ±Inf are rejected.
package dataset
