-- The syntax tree of the operator's statement (stacklens/explore/statement_guard.py): EXPLAIN AST parses and
-- never runs what it explains, so a statement can be judged by its kinds of nodes before the engine executes
-- it. {statement} is a text the parser has already read as exactly one statement (statement_text.sql).
EXPLAIN AST {statement}
