// Package dataset reads the data the fedecdf tools work on.
//
// It reads numeric columns of CSV files (scores whose ECDF is
// released), scored and labelled records (for ROC curves and the
// Hosmer–Lemeshow statistic), and whole tables on which a logistic
// regression is trained to produce those scores, as in dp-ecdf §6.
//
// # CSV input
//
// Every CSV input has a header line. The separator is ',', ';' or tab,
// detected from the header line when not given (DetectSeparator), and
// fields may be double-quoted, as in the UCI Bank Marketing file
// ("age";"job";…). Errors name the input, the line and the column, and say
// what is wrong; a missing column lists the columns there are. A numeric
// value must be a finite number: NaN and ±Inf are rejected. Quoting is
// strict RFC 4180 (a malformed quote is an error, not a guess).
//
// # Labels
//
// ReadScored and ScoreTable take the positive class as text: "" for a 0/1
// label column, "v" for label 1 iff the value is v (Bank-full: "yes"), and
// "!v" for label 1 iff the value is not v. The paper's Diabetes label is
// readmitted ≠ "NO" (its Table 1 positive fraction 0.460 = 46,902/101,766),
// written "!NO".
//
// # Tables, features and the classifier
//
// ReadTable keeps every field as text. A column is numeric when every
// present value in the table is a finite number, categorical otherwise;
// "", "?", "NA", "NaN" and "null" mean missing (IsMissing). An Encoder,
// fit on the training rows only, standardises numeric columns by their
// training mean and (population) standard deviation, imputes a missing
// value by the mean and adds a missing indicator; it one-hot encodes
// categorical columns with the training levels (missing is a level, an
// unseen level encodes as all zeros). It drops the label, the columns
// asked for (identifiers such as Diabetes' encounter_id and patient_nbr),
// and, saying why in Encoder.Dropped, columns that are constant or have
// more than MaxLevels (default 100) levels in training, such as the
// Diabetes ICD-9 codes diag_1..3.
//
// ScoreTable splits the rows at random with a seed (70/30 by default:
// dp-ecdf §6 does not state its split), trains a logistic regression
// (package logreg, scikit-learn's default objective as in dp-ecdf §6.1) on
// the training rows and returns the predicted probabilities and labels of
// the test rows: the scores whose private ROC curve and Hosmer–Lemeshow
// statistic the rest of fedecdf computes. It also reports the test accuracy
// and the exact AUC (AUC, the Mann–Whitney statistic), for checking.
//
// # Synthetic data
//
// Synthetic generates a labelled table (numeric and categorical features,
// missing values, a logistic ground truth with AUC about 0.8), so that
// `fedecdf simulate` runs without files.
package dataset
