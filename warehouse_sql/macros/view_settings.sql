-- The settings of every performance view read, as its query's last clause (`SETTINGS ${view_settings}`). No JIT
-- compilation of expressions or aggregate functions: the engine compiles an expression after it has run it three
-- times with the same constants (a filter set's dates and names among them), on the call that happens to be the
-- third — 100–350 ms added to one call of a view that otherwise takes ~90 ms (bench/RESULTS.md, seventh round);
-- these reads aggregate a few thousand state rows, so compiled code never pays that back.
compile_expressions = 0, compile_aggregate_expressions = 0
