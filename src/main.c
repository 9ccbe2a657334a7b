#include <stdio.h>
int main(void) { puts("sluice: under construction"); return 0; }
