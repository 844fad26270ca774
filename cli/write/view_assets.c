/*
 * view_assets.c -- the page `posixtrace view` serves (cli/write/view_page.html:
 * HTML, CSS and the script in one file, nothing loaded from elsewhere),
 * built into the binary byte for byte and ended by a NUL.
 */
#include "write.h"

__asm__(".section .rodata\n"
        ".global view_page\n"
        ".type view_page, @object\n"
        "view_page:\n"
        ".incbin \"cli/write/view_page.html\"\n"
        ".byte 0\n"
        ".size view_page, . - view_page\n"
        ".previous\n");
