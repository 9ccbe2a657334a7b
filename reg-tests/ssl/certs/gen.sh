#!/bin/sh
# Regenerates the test PKI of reg-tests/ssl (valid for 100 years, so that
# the committed files do not expire). Run from this directory:
#   sh gen.sh
# ca.pem            test CA (RSA 2048), ca.key its key
# www.pem           www.test.local and test.local, RSA 2048, signed by the CA (key inside)
# www-ecdsa.pem     the same names, ECDSA P-256
# wild.pem          *.wild.test, ECDSA P-256
# client.pem        client certificate (CN=client1), signed by the CA
# rogue.pem         self-signed client certificate (CN=rogue): fails verification
# backend.pem       backend.test, for TLS servers behind sluice
# nokey.pem         a certificate without its key; mismatch.pem: key of another cert
set -e
days=36500
subj() { echo "/O=sluice tests/CN=$1"; }
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days $days \
	-subj "$(subj 'sluice test CA')" 2>/dev/null
sign() { # name keyopts cn san
	openssl req -new -newkey "$2" -nodes -keyout "$1.key" -out "$1.csr" -subj "$(subj "$3")" 2>/dev/null
	printf 'subjectAltName=%s\nbasicConstraints=CA:FALSE\n' "$4" > "$1.ext"
	openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days $days \
		-extfile "$1.ext" -out "$1.crt" 2>/dev/null
	cat "$1.crt" "$1.key" > "$1.pem"
	rm -f "$1.csr" "$1.ext" "$1.crt" "$1.key"
}
sign www rsa:2048 www.test.local "DNS:www.test.local,DNS:test.local"
openssl ecparam -name prime256v1 -out p256.param
sign www-ecdsa ec:p256.param www.test.local "DNS:www.test.local,DNS:test.local"
sign wild ec:p256.param '*.wild.test' "DNS:*.wild.test"
sign client rsa:2048 client1 "DNS:client1"
sign backend ec:p256.param backend.test "DNS:backend.test"
rm -f p256.param ca.srl
openssl req -x509 -newkey rsa:2048 -nodes -keyout rogue.key -out rogue.crt -days $days \
	-subj "$(subj rogue)" 2>/dev/null
cat rogue.crt rogue.key > rogue.pem
rm -f rogue.crt rogue.key
openssl x509 -in www.pem -out nokey.pem
{ openssl x509 -in www.pem; openssl pkey -in client.pem; } > mismatch.pem
