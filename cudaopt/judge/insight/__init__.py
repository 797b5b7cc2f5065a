"""What the judge can tell beyond the verdict, on request: Nsight Compute's metrics of the
candidate's kernels, measured after the judgement and feeding none of its figures."""
