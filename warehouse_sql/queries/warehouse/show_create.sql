-- One object's definition as the engine stands by it (a table, a dictionary or a view alike).
SHOW CREATE TABLE {db:Identifier}.{name:Identifier}
