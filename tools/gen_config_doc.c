/*
 * Writes a configuration reference from a property table (make docs):
 * "client" gives docs/CONFIGURATION.md, "connector" gives
 * docs/CONNECTOR_CONFIGURATION.md (the connector's keys, then the SQL
 * table options), all by the one writer every table shares.
 */
#include <stdio.h>
#include <string.h>

#include "conf/props.h"
#include "connector/connector_props.h"
#include "connector/table_props.h"

int main(int argc, char **argv) {
    const char *which = argc > 1 ? argv[1] : "";
    if (!strcmp(which, "client"))
        pc_prop_write_doc(&pc_conf_table, stdout);
    else if (!strcmp(which, "connector")) {
        pc_prop_write_doc(&pc_cc_table, stdout);
        fputc('\n', stdout);
        pc_prop_write_doc(&pc_table_opt_table, stdout);
    }
    else {
        fprintf(stderr, "usage: %s client|connector\n", argv[0]);
        return 2;
    }
    return 0;
}
