-- The operator's statement as the engine's own parser reads it (stacklens/explore/statement_guard.py): the text
-- arrives as a parameter, so nothing in it runs; the parser refuses two statements ("Multi-statements are not
-- allowed") and anything it cannot read, and answers the statement formatted, comments gone.
SELECT formatQuery({statement:String}) AS formatted
