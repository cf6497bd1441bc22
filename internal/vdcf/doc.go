// Package vdcf is the DCF backend's verified upload: a party's record
// becomes a pair of field DCF keys (fss.GenField) plus a little correlated
// randomness, and both servers check, on their shares of the report's
// full-domain prefix vector alone, that it encodes exactly one record.
package vdcf
