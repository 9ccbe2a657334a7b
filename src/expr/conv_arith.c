/* Arithmetic, bitwise and boolean converters on signed 64-bit integers
 * (manual section 7.3.1). The operand is a constant or a variable.
 *
 * Overflow rules (HAProxy's): add, sub, mul, neg saturate at the int64
 * limits instead of wrapping; div by zero gives INT64_MAX, and
 * INT64_MIN / -1 gives INT64_MAX; mod by zero gives 0. An operand variable
 * that is not set or not an integer makes the converter fail.
 */
#include <stdint.h>
#include <sluice/expr/sample.h>

const int expr_conv_arith_anchor;

#define C(name) static int smp_conv_##name(const struct smp_args *args, \
	struct sample *smp, struct smp_ctx *ctx)

C(add); C(sub); C(mul); C(div); C(mod); C(neg); C(and); C(or); C(xor); C(cpl);
C(not); C(bool); C(odd); C(even);
#undef C

static int check_operand(struct smp_args *args, char *err, size_t errlen)
{
	return smp_arg_int_or_var(&args->a[0], err, errlen);
}

static const struct smp_conv_kw arith_convs[] = {
	{ "add",  smp_conv_add,  { ARGT_STR }, 1, check_operand, SMP_T_SINT, SMP_T_SINT },
	{ "sub",  smp_conv_sub,  { ARGT_STR }, 1, check_operand, SMP_T_SINT, SMP_T_SINT },
	{ "mul",  smp_conv_mul,  { ARGT_STR }, 1, check_operand, SMP_T_SINT, SMP_T_SINT },
	{ "div",  smp_conv_div,  { ARGT_STR }, 1, check_operand, SMP_T_SINT, SMP_T_SINT },
	{ "mod",  smp_conv_mod,  { ARGT_STR }, 1, check_operand, SMP_T_SINT, SMP_T_SINT },
	{ "and",  smp_conv_and,  { ARGT_STR }, 1, check_operand, SMP_T_SINT, SMP_T_SINT },
	{ "or",   smp_conv_or,   { ARGT_STR }, 1, check_operand, SMP_T_SINT, SMP_T_SINT },
	{ "xor",  smp_conv_xor,  { ARGT_STR }, 1, check_operand, SMP_T_SINT, SMP_T_SINT },
	{ "neg",  smp_conv_neg,  { 0 }, 0, NULL, SMP_T_SINT, SMP_T_SINT },
	{ "cpl",  smp_conv_cpl,  { 0 }, 0, NULL, SMP_T_SINT, SMP_T_SINT },
	{ "not",  smp_conv_not,  { 0 }, 0, NULL, SMP_T_SINT, SMP_T_BOOL },
	{ "bool", smp_conv_bool, { 0 }, 0, NULL, SMP_T_SINT, SMP_T_BOOL },
	{ "odd",  smp_conv_odd,  { 0 }, 0, NULL, SMP_T_SINT, SMP_T_BOOL },
	{ "even", smp_conv_even, { 0 }, 0, NULL, SMP_T_SINT, SMP_T_BOOL },
	{ NULL }
};
SMP_REGISTER_CONVS(arith_convs)

static int operand(const struct smp_args *args, struct smp_ctx *ctx, int64_t *v)
{
	return smp_arg_get_sint(&args->a[0], ctx, v);
}

static int64_t saturate(int overflow, int64_t r, int negative)
{
	if (!overflow)
		return r;
	return negative ? INT64_MIN : INT64_MAX;
}

static int smp_conv_add(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	int64_t v, r;

	if (!operand(args, ctx, &v))
		return 0;
	if (__builtin_add_overflow(smp->data.sint, v, &r))
		r = saturate(1, r, v < 0);
	smp_set_sint(smp, r);
	return 1;
}

static int smp_conv_sub(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	int64_t v, r;

	if (!operand(args, ctx, &v))
		return 0;
	if (__builtin_sub_overflow(smp->data.sint, v, &r))
		r = saturate(1, r, v > 0);
	smp_set_sint(smp, r);
	return 1;
}

static int smp_conv_mul(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	int64_t v, r;

	if (!operand(args, ctx, &v))
		return 0;
	if (__builtin_mul_overflow(smp->data.sint, v, &r))
		r = saturate(1, r, (smp->data.sint < 0) != (v < 0));
	smp_set_sint(smp, r);
	return 1;
}

static int smp_conv_div(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	int64_t v;

	if (!operand(args, ctx, &v))
		return 0;
	if (!v || (v == -1 && smp->data.sint == INT64_MIN))
		smp_set_sint(smp, INT64_MAX);
	else
		smp_set_sint(smp, smp->data.sint / v);
	return 1;
}

static int smp_conv_mod(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	int64_t v;

	if (!operand(args, ctx, &v))
		return 0;
	if (!v || v == -1)
		smp_set_sint(smp, 0);
	else
		smp_set_sint(smp, smp->data.sint % v);
	return 1;
}

static int smp_conv_neg(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	smp_set_sint(smp, smp->data.sint == INT64_MIN ? INT64_MAX : -smp->data.sint);
	return 1;
}

static int smp_conv_and(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	int64_t v;

	if (!operand(args, ctx, &v))
		return 0;
	smp_set_sint(smp, smp->data.sint & v);
	return 1;
}

static int smp_conv_or(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	int64_t v;

	if (!operand(args, ctx, &v))
		return 0;
	smp_set_sint(smp, smp->data.sint | v);
	return 1;
}

static int smp_conv_xor(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	int64_t v;

	if (!operand(args, ctx, &v))
		return 0;
	smp_set_sint(smp, smp->data.sint ^ v);
	return 1;
}

static int smp_conv_cpl(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	smp_set_sint(smp, ~smp->data.sint);
	return 1;
}

static int smp_conv_not(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	smp_set_bool(smp, !smp->data.sint);
	return 1;
}

static int smp_conv_bool(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	smp_set_bool(smp, smp->data.sint != 0);
	return 1;
}

static int smp_conv_odd(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	smp_set_bool(smp, smp->data.sint & 1);
	return 1;
}

static int smp_conv_even(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	smp_set_bool(smp, !(smp->data.sint & 1));
	return 1;
}
