"""What people read after the judge has spoken: a verdict (`verdict`), its warm figures
(`perf`), a whole run (`run`) and its tokens per step (`steps`); rich on a terminal, plain
when piped, Markdown on the branch. Read-only over verdicts and run folders."""
