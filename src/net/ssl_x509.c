/* Certificate fields printed as HAProxy 2.6 prints them (see
 * include/sluice/net/ssl_x509.h). Pure functions; any thread. */
#include <string.h>
#include <strings.h>
#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/objects.h>
#include <sluice/net/ssl_x509.h>

/* The short name of an entry's attribute, or its dotted OID. */
static const char *entry_name(const X509_NAME_ENTRY *ne, char *buf, size_t size)
{
	const ASN1_OBJECT *obj = X509_NAME_ENTRY_get_object(ne);
	int nid = OBJ_obj2nid(obj);
	const char *sn = nid != NID_undef ? OBJ_nid2sn(nid) : NULL;

	if (sn)
		return sn;
	if (OBJ_obj2txt(buf, (int)size, obj, 1) <= 0)
		buf[0] = '\0';
	return buf;
}

int ssl_x509_dn_oneline(const X509_NAME *name, char *out, size_t size)
{
	int n = X509_NAME_entry_count(name);
	size_t len = 0;
	char oid[128];

	for (int i = 0; i < n; i++) {
		const X509_NAME_ENTRY *ne = X509_NAME_get_entry(name, i);
		const ASN1_STRING *data = X509_NAME_ENTRY_get_data(ne);
		const char *sn = entry_name(ne, oid, sizeof(oid));
		size_t snl = strlen(sn), dl = (size_t)ASN1_STRING_length(data);

		if (len + 2 + snl + dl > size)
			return -1;
		out[len++] = '/';
		memcpy(out + len, sn, snl);
		len += snl;
		out[len++] = '=';
		memcpy(out + len, ASN1_STRING_get0_data(data), dl);
		len += dl;
	}
	return (int)len;
}

int ssl_x509_dn_entry(const X509_NAME *name, const char *entry, size_t entry_len, int pos,
                      char *out, size_t size)
{
	int n = X509_NAME_entry_count(name), seen = 0;
	char oid[128];

	if (pos == 0)
		return 0;
	for (int i = 0; i < n; i++) {
		const X509_NAME_ENTRY *ne = X509_NAME_get_entry(name, pos > 0 ? i : n - 1 - i);
		const char *sn = entry_name(ne, oid, sizeof(oid));
		const ASN1_STRING *data;
		size_t dl;

		if (strlen(sn) != entry_len || strncasecmp(sn, entry, entry_len) != 0)
			continue;
		if (++seen != (pos > 0 ? pos : -pos))
			continue;
		data = X509_NAME_ENTRY_get_data(ne);
		dl = (size_t)ASN1_STRING_length(data);
		if (dl > size)
			return -1;
		memcpy(out, ASN1_STRING_get0_data(data), dl);
		return (int)dl;
	}
	return 0;
}

int ssl_x509_dn_rfc2253(const X509_NAME *name, char *out, size_t size)
{
	BIO *bio = BIO_new(BIO_s_mem());
	const char *p;
	long len;
	int ret = -1;

	if (!bio)
		return -1;
	if (X509_NAME_print_ex(bio, name, 0, XN_FLAG_RFC2253) >= 0) {
		len = BIO_get_mem_data(bio, &p);
		if (len >= 0 && (size_t)len <= size) {
			memcpy(out, p, (size_t)len);
			ret = (int)len;
		}
	}
	BIO_free(bio);
	return ret;
}

int ssl_x509_time(const ASN1_TIME *t, char *out, size_t size)
{
	const unsigned char *d = ASN1_STRING_get0_data(t);
	size_t len = (size_t)ASN1_STRING_length(t);

	switch (ASN1_STRING_type(t)) {
	case V_ASN1_GENERALIZEDTIME:
		/* YYYYMMDDhhmmss[Z]: the two-digit year of a UTCTime */
		if (len < 12 || d[0] != '2' || d[1] != '0')
			return 0;
		d += 2;
		len -= 2;
		break;
	case V_ASN1_UTCTIME:
		/* YYMMDDhhmm[ss]Z: years 50-99 are 1950-1999 (RFC 5280
		 * 4.1.2.5.1), which HAProxy does not print */
		if (len < 10 || d[0] >= '5')
			return 0;
		break;
	default:
		return 0;
	}
	if (len > size)
		return -1;
	memcpy(out, d, len);
	return (int)len;
}
