/* Protocol converters on raw payloads (manual section 7.3.1): FIX
 * (fix_is_valid, fix_tag_value) and MQTT 3.1, 3.1.1 and 5.0 CONNECT and
 * CONNACK packets (mqtt_is_valid, mqtt_field_value). Parsing is bounded by
 * the input; nothing is allocated; no shared state.
 *
 * An MQTT packet not complete yet makes the converter fail with
 * SMP_F_MAY_CHANGE, so that a rule waits for more data.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sluice/core/errmsg.h>
#include <sluice/expr/sample.h>

const int expr_conv_proto_anchor;

#define C(name) static int smp_conv_##name(const struct smp_args *args, \
	struct sample *smp, struct smp_ctx *ctx)
C(fix_is_valid); C(fix_tag_value); C(mqtt_is_valid); C(mqtt_field_value);
#undef C
static int check_fix_tag(struct smp_args *args, char *err, size_t errlen);
static int check_mqtt_field(struct smp_args *args, char *err, size_t errlen);

static const struct smp_conv_kw proto_convs[] = {
	{ "fix_is_valid", smp_conv_fix_is_valid, { 0 }, 0, NULL, SMP_T_BIN, SMP_T_BOOL },
	{ "fix_tag_value", smp_conv_fix_tag_value, { ARGT_STR }, 1, check_fix_tag, SMP_T_BIN, SMP_T_BIN },
	{ "mqtt_is_valid", smp_conv_mqtt_is_valid, { 0 }, 0, NULL, SMP_T_BIN, SMP_T_BOOL },
	{ "mqtt_field_value", smp_conv_mqtt_field_value, { ARGT_STR, ARGT_STR }, 2,
	  check_mqtt_field, SMP_T_BIN, SMP_T_STR },
	{ NULL }
};
SMP_REGISTER_CONVS(proto_convs)

/* ------------------------------------------------------------------ FIX */

#define FIX_SOH 0x01

/* Next "tag=value<SOH>" at *p. Returns 1 with the parts, 0 at the end, -1
 * if malformed (empty or non-numeric tag, empty value, no SOH). */
static int fix_next(const char **p, const char *e, long *tag, const char **v, size_t *vlen)
{
	const char *s = *p, *eq, *soh;
	long t = 0;

	if (s >= e)
		return 0;
	eq = memchr(s, '=', (size_t)(e - s));
	if (!eq || eq == s || eq - s > 9)
		return -1;
	for (const char *q = s; q < eq; q++) {
		if (*q < '0' || *q > '9')
			return -1;
		t = t * 10 + (*q - '0');
	}
	soh = memchr(eq + 1, FIX_SOH, (size_t)(e - eq - 1));
	if (!soh || soh == eq + 1)
		return -1;
	*tag = t;
	*v = eq + 1;
	*vlen = (size_t)(soh - eq - 1);
	*p = soh + 1;
	return 1;
}

static int fix_valid(const char *s, size_t len)
{
	const char *p = s, *e = s + len, *v, *body = NULL, *cks = NULL;
	static const char *const versions[] = { "FIX.4.0", "FIX.4.1", "FIX.4.2", "FIX.4.3",
	                                        "FIX.4.4", "FIXT.1.1" };
	long tag, bodylen = -1, n = 0;
	size_t vlen;
	int r, ok = 0;
	unsigned int sum = 0;

	while ((r = fix_next(&p, e, &tag, &v, &vlen)) > 0) {
		n++;
		if (n == 1) {
			if (tag != 8)
				return 0;
			for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
				ok |= strlen(versions[i]) == vlen && memcmp(versions[i], v, vlen) == 0;
			if (!ok)
				return 0;
		} else if (n == 2) {
			if (tag != 9 || !vlen)
				return 0;
			bodylen = strtol(v, NULL, 10);
			body = p;
		} else if (n == 3 && tag != 35) {
			return 0;
		}
		if (tag == 10) {
			cks = v - 3;
			if (p != e || vlen != 3)
				return 0;
			break;
		}
	}
	if (r < 0 || !cks || n < 4 || !body || cks - body != bodylen)
		return 0;
	for (const char *q = s; q < cks; q++)
		sum += (unsigned char)*q;
	return (long)(sum % 256) == strtol(cks + 3, NULL, 10);
}

static int smp_conv_fix_is_valid(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	smp_set_bool(smp, fix_valid(smp->data.str.ptr, smp->data.str.len));
	return 1;
}

static int check_fix_tag(struct smp_args *args, char *err, size_t errlen)
{
	static const struct { const char *name; long tag; } names[] = {
		{ "BeginString", 8 }, { "BodyLength", 9 }, { "MsgType", 35 },
		{ "SenderCompID", 49 }, { "TargetCompID", 56 }, { "CheckSum", 10 },
	};
	const char *s = args->a[0].data.str.ptr;
	int64_t v;

	if (smp_str_to_sint(s, strlen(s), &v) && v > 0) {
		args->priv = (void *)(intptr_t)v;
		return 0;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcasecmp(s, names[i].name) == 0) {
			args->priv = (void *)(intptr_t)names[i].tag;
			return 0;
		}
	return errmsg_set(err, errlen, "unknown FIX tag '%s'", s);
}

static int smp_conv_fix_tag_value(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	const char *p = smp->data.str.ptr, *e = p + smp->data.str.len, *v;
	long want = (long)(intptr_t)args->priv, tag;
	size_t vlen;

	while (fix_next(&p, e, &tag, &v, &vlen) > 0)
		if (tag == want) {
			smp->data.str.ptr = (char *)v;
			smp->data.str.len = vlen;
			smp->data.str.size = 0;
			smp->flags |= SMP_F_CONST;
			return 1;
		}
	return 0;
}

/* ------------------------------------------------------------------ MQTT */

enum { MQTT_CONNECT = 1, MQTT_CONNACK = 2 };
enum { MQTT_ERR = -1, MQTT_INCOMPLETE = -2 };

enum mqtt_field {
	MF_FLAGS = 1, MF_PROTO_NAME, MF_PROTO_VERSION, MF_CLIENT_ID, MF_WILL_TOPIC,
	MF_WILL_PAYLOAD, MF_USERNAME, MF_PASSWORD, MF_KEEPALIVE, MF_REASON_CODE,
	MF_PROPERTY = 0x100,       /* | property id */
};

struct mqtt_cur {
	const unsigned char *p, *e;
};

static int rd_u8(struct mqtt_cur *c, unsigned int *v)
{
	if (c->p >= c->e)
		return 0;
	*v = *c->p++;
	return 1;
}

static int rd_u16(struct mqtt_cur *c, unsigned int *v)
{
	if (c->e - c->p < 2)
		return 0;
	*v = (unsigned int)c->p[0] << 8 | c->p[1];
	c->p += 2;
	return 1;
}

static int rd_varint(struct mqtt_cur *c, unsigned long *v)
{
	*v = 0;
	for (int i = 0; i < 4; i++) {
		if (c->p >= c->e)
			return 0;
		*v |= (unsigned long)(*c->p & 0x7f) << (7 * i);
		if (!(*c->p++ & 0x80))
			return 1;
	}
	return 0;
}

/* A length-prefixed string or binary. */
static int rd_blob(struct mqtt_cur *c, const unsigned char **p, size_t *len)
{
	unsigned int l;

	if (!rd_u16(c, &l) || (size_t)(c->e - c->p) < l)
		return 0;
	*p = c->p;
	*len = l;
	c->p += l;
	return 1;
}

struct mqtt_value {
	int is_int;
	unsigned long num;
	const unsigned char *p;
	size_t len;
};

/* Walks a v5 property list; fills <out> when property <want> is met. */
static int mqtt_props(struct mqtt_cur *c, int want, struct mqtt_value *out, int *found)
{
	unsigned long plen, id;
	struct mqtt_cur pc;

	if (!rd_varint(c, &plen) || (unsigned long)(c->e - c->p) < plen)
		return 0;
	pc.p = c->p;
	pc.e = c->p + plen;
	c->p += plen;
	while (pc.p < pc.e) {
		struct mqtt_value v = { 0 };
		unsigned int u;

		if (!rd_varint(&pc, &id))
			return 0;
		switch (id) {
		case 1: case 23: case 25: case 36: case 37: case 40: case 41: case 42:
			if (!rd_u8(&pc, &u)) return 0;
			v.is_int = 1; v.num = u;
			break;
		case 19: case 33: case 34: case 35:
			if (!rd_u16(&pc, &u)) return 0;
			v.is_int = 1; v.num = u;
			break;
		case 2: case 17: case 24: case 39:
			if (pc.e - pc.p < 4) return 0;
			v.is_int = 1;
			v.num = (unsigned long)pc.p[0] << 24 | (unsigned long)pc.p[1] << 16 |
			        (unsigned long)pc.p[2] << 8 | pc.p[3];
			pc.p += 4;
			break;
		case 11:
			if (!rd_varint(&pc, &v.num)) return 0;
			v.is_int = 1;
			break;
		case 3: case 8: case 18: case 21: case 26: case 28: case 31: case 9: case 22:
			if (!rd_blob(&pc, &v.p, &v.len)) return 0;
			break;
		case 38:                       /* user property: a pair, skipped */
			if (!rd_blob(&pc, &v.p, &v.len) || !rd_blob(&pc, &v.p, &v.len)) return 0;
			continue;
		default:
			return 0;
		}
		if ((int)id == want && !*found) {
			*out = v;
			*found = 1;
		}
	}
	return 1;
}

/* Parses one CONNECT or CONNACK packet; when <want> (MQTT_* type and
 * field) matches, fills <out>. Returns the packet type, MQTT_ERR or
 * MQTT_INCOMPLETE; *found tells whether the field was met. */
static int mqtt_parse(const unsigned char *data, size_t len, int want_type, int want,
                      struct mqtt_value *out, int *found)
{
	struct mqtt_cur c = { data, data + len };
	unsigned int b0, u, level = 0, flags = 0, keep;
	unsigned long rlen;
	const unsigned char *p;
	size_t l;
	int type;

	*found = 0;
	if (!rd_u8(&c, &b0))
		return MQTT_INCOMPLETE;
	type = (int)(b0 >> 4);
	if (type != MQTT_CONNECT && type != MQTT_CONNACK)
		return MQTT_ERR;
	if (!rd_varint(&c, &rlen))
		return c.p >= c.e ? MQTT_INCOMPLETE : MQTT_ERR;
	if ((unsigned long)(c.e - c.p) < rlen)
		return MQTT_INCOMPLETE;
	c.e = c.p + rlen;
#define FIELD(f, isint, n, ptr, l_) do { if (type == want_type && want == (f)) { \
	out->is_int = (isint); out->num = (n); out->p = (ptr); out->len = (l_); *found = 1; } } while (0)
	if (type == MQTT_CONNACK) {
		if ((b0 & 0x0f) || !rd_u8(&c, &flags) || !rd_u8(&c, &u))
			return MQTT_ERR;
		FIELD(MF_FLAGS, 1, flags, NULL, 0);
		FIELD(MF_REASON_CODE, 1, u, NULL, 0);
		if (c.p < c.e && !mqtt_props(&c, want & MF_PROPERTY && want_type == type ?
		                             want & 0xff : -1, out, found))
			return MQTT_ERR;
		return c.p == c.e ? type : MQTT_ERR;
	}
	if ((b0 & 0x0f) || !rd_blob(&c, &p, &l))
		return MQTT_ERR;
	if (!((l == 4 && memcmp(p, "MQTT", 4) == 0) || (l == 6 && memcmp(p, "MQIsdp", 6) == 0)))
		return MQTT_ERR;
	FIELD(MF_PROTO_NAME, 0, 0, p, l);
	if (!rd_u8(&c, &level) || (level != 3 && level != 4 && level != 5))
		return MQTT_ERR;
	FIELD(MF_PROTO_VERSION, 1, level, NULL, 0);
	if (!rd_u8(&c, &flags) || (flags & 0x01) || !rd_u16(&c, &keep))
		return MQTT_ERR;
	FIELD(MF_FLAGS, 1, flags, NULL, 0);
	FIELD(MF_KEEPALIVE, 1, keep, NULL, 0);
	if (level == 5 && !mqtt_props(&c, want & MF_PROPERTY && want_type == type ?
	                              want & 0xff : -1, out, found))
		return MQTT_ERR;
	if (!rd_blob(&c, &p, &l))
		return MQTT_ERR;
	FIELD(MF_CLIENT_ID, 0, 0, p, l);
	if (flags & 0x04) {                    /* will flag */
		if (level == 5 && !mqtt_props(&c, -1, out, found))
			return MQTT_ERR;
		if (!rd_blob(&c, &p, &l))
			return MQTT_ERR;
		FIELD(MF_WILL_TOPIC, 0, 0, p, l);
		if (!rd_blob(&c, &p, &l))
			return MQTT_ERR;
		FIELD(MF_WILL_PAYLOAD, 0, 0, p, l);
	}
	if (flags & 0x80) {
		if (!rd_blob(&c, &p, &l))
			return MQTT_ERR;
		FIELD(MF_USERNAME, 0, 0, p, l);
	}
	if (flags & 0x40) {
		if (!rd_blob(&c, &p, &l))
			return MQTT_ERR;
		FIELD(MF_PASSWORD, 0, 0, p, l);
	}
#undef FIELD
	return c.p == c.e ? type : MQTT_ERR;
}

static int smp_conv_mqtt_is_valid(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	struct mqtt_value v;
	int found;
	int r = mqtt_parse((const unsigned char *)smp->data.str.ptr, smp->data.str.len, 0, 0,
	                   &v, &found);

	if (r == MQTT_INCOMPLETE) {
		smp->flags |= SMP_F_MAY_CHANGE;
		return 0;
	}
	smp_set_bool(smp, r > 0);
	return 1;
}

/* priv: packet type << 16 | field */
static int check_mqtt_field(struct smp_args *args, char *err, size_t errlen)
{
	static const struct { const char *name; int field; int types; } fields[] = {
		{ "flags", MF_FLAGS, 3 }, { "protocol_name", MF_PROTO_NAME, 1 },
		{ "protocol_version", MF_PROTO_VERSION, 1 },
		{ "client_identifier", MF_CLIENT_ID, 1 }, { "will_topic", MF_WILL_TOPIC, 1 },
		{ "will_payload", MF_WILL_PAYLOAD, 1 }, { "username", MF_USERNAME, 1 },
		{ "password", MF_PASSWORD, 1 }, { "keepalive", MF_KEEPALIVE, 1 },
		{ "reason_code", MF_REASON_CODE, 2 },
	};
	const char *t = args->a[0].data.str.ptr, *f = args->a[1].data.str.ptr;
	int type, field = 0;
	int64_t n;

	if (strcasecmp(t, "connect") == 0 || strcmp(t, "1") == 0)
		type = MQTT_CONNECT;
	else if (strcasecmp(t, "connack") == 0 || strcmp(t, "2") == 0)
		type = MQTT_CONNACK;
	else
		return errmsg_set(err, errlen, "unsupported MQTT packet type '%s' (connect, "
		                  "connack)", t);
	if (smp_str_to_sint(f, strlen(f), &n) && n > 0 && n < 256)
		field = MF_PROPERTY | (int)n;
	for (size_t i = 0; !field && i < sizeof(fields) / sizeof(fields[0]); i++)
		if (strcasecmp(f, fields[i].name) == 0 && (fields[i].types & type))
			field = fields[i].field;
	if (!field)
		return errmsg_set(err, errlen, "unknown field '%s' for MQTT packet type '%s'", f, t);
	args->priv = (void *)(intptr_t)(type << 16 | field);
	return 0;
}

static int smp_conv_mqtt_field_value(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	int conf = (int)(intptr_t)args->priv, found;
	struct mqtt_value v = { 0 };
	int r = mqtt_parse((const unsigned char *)smp->data.str.ptr, smp->data.str.len,
	                   conf >> 16, conf & 0xffff, &v, &found);

	if (r == MQTT_INCOMPLETE) {
		smp->flags |= SMP_F_MAY_CHANGE;
		return 0;
	}
	if (r < 0 || !found)
		return 0;
	if (v.is_int) {
		smp_set_trash(smp, SMP_T_STR);
		smp->data.str.len = (size_t)snprintf(smp->data.str.ptr, smp->data.str.size,
		                                     "%lu", v.num);
	} else
		smp_set_const_str(smp, SMP_T_STR, (const char *)v.p, v.len);
	return 1;
}
