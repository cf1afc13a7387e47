{ [d0] -> [o0] : 0 <= d0 <= 9 }
// IN: isl-errors.isl:[[@LINE-1]]:12: error: unknown identifier 'o0' (an output must be an expression of the inputs and parameters)
// -----
{ [d0] -> [d0] : 0 <= d0 <= 9 or d0 = 20 }
// IN: isl-errors.isl:[[@LINE-1]]:31: error: disjunctions are not supported in isl input
// -----
{ [d0] -> [floor(d0/s)] : 0 <= d0 <= 9 }
// IN: isl-errors.isl:[[@LINE-1]]:21: error: expected integer
// -----
[n] -> { [d0] -> [d0] : d0 }
// IN: isl-errors.isl:[[@LINE-1]]:28: error: expected a comparison ('<=', '<', '>=', '>' or '=')
// -----
(d0) -> (d0), domain: d0 in [0, 3]
// IN: isl-errors.isl:[[@LINE-1]]:1: error: expected '{'
// -----
{ [d0] -> [d0] : 0 <= d0 <= 9 }; { [d0] -> [d0 + 1] }
// IN: isl-errors.isl:[[@LINE-1]]:32: error: unexpected character ';'
