"""The agent loop behind `cudaopt optimize`, as three small protocols (after mini-swe-agent):
a model (`models`: litellm, replay), an environment (`tools`: a workspace and six tools),
and the loop (`loop`) that decides, through cudaopt's own judge, when a run is done.
`run` ties them to a run directory; `records` is the seam the judge's CLI writes through."""
