// Package theory measures Theorem 1 of the TR-MAML paper: on a convex task
// family where every quantity is exact, Algorithm 1 (run through the real
// metalearn.Trainer and Method) with the theorem's step sizes and output rule
// T1 has an expected duality gap that falls like 1/sqrt(T). The family is
// linear regression with population losses, whose one-step MAML objectives
// are convex quadratics; the saddle point is computed independently, from
// the concave dual max_p min_w sum_i p_i F_i(w) whose inner minimum is a
// linear solve, and certified by the duality gap and complementary
// slackness.
package theory
