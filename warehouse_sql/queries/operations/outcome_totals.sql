-- The installation's items of the last day by outcome, every organization together: the operators' page shows
-- what the front door accepted and refused (the organizations' usage pages show their own).
SELECT outcome, sum(quantity) AS quantity
FROM outcomes
WHERE hour >= toStartOfHour(now() - INTERVAL 24 HOUR)
GROUP BY outcome
ORDER BY quantity DESC, outcome
