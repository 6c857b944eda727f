// Placeholder entry point until the CLI lands (same commit series).
#include <cstdio>
int main() { std::puts("ccltune: not built yet"); return 1; }
