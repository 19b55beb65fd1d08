// Placeholder replaced by the native `ptqscope run` command (same flags as the Node CLI).
int main() { return 0; }
