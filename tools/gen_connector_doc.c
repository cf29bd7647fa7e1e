/* Writes docs/CONNECTOR_CONFIGURATION.md from the connector's property table (make docs). */
#include <stdio.h>

#include "connector/config_int.h"

int main(void) {
    pc_cc_write_doc(stdout);
    return 0;
}
