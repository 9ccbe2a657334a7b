/* One hex digit's value, shared by every parser that decodes hex
 * (escapes, percent-encoding, JSON \u, binary patterns). */
#ifndef SLUICE_CORE_HEXDIGIT_H
#define SLUICE_CORE_HEXDIGIT_H

/* 0..15 for [0-9a-fA-F], -1 otherwise. */
static inline int hex_digit_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif
