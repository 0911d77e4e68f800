typedef int xg_placeholder;
