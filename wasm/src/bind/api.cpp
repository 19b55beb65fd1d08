// embind glue (pending)
