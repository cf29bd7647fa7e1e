/* Writes docs/CONFIGURATION.md from the property table (make docs). */
#include <stdio.h>

#include "conf/props.h"

int main(void) {
    pc_conf_write_doc(stdout);
    return 0;
}
