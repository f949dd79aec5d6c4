#include "sections.h"
int an_section_units(an_run *r)
{
    (void)r;
    return DCH_OK;
}
