// Package analyst asks a deployment's leader for releases and status.
//
// Analyses. Analyst.ECDF (count component), Analyst.ROC (the pair {Label,
// NotLabel}, one privacy unit) and Analyst.Hosmer (dp-ecdf Algorithm 2
// under hosmer's grid, joint or paper plan, replace-one only) create
// releases; ReadRelease, ROCRelease and HosmerRelease re-read existing
// ones at no cost — HosmerRelease runs the grid plan on a ROC release, so
// the Hosmer–Lemeshow test comes with the ROC curve for free.
//
// AskStatus asks the leader for both servers' status, for the
// manifest's analysts and operators (ErrNotStatusKey otherwise).
package analyst
