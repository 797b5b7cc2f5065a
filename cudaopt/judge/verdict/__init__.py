"""The verdict and its reward, and the options a judgement runs with: the types every stage
fills in or reads, so they sit below all of them."""
