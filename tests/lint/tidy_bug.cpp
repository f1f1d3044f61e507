// A fixture for lint.tidy.detects_bugs: memset with its value and length
// swapped, which bugprone-suspicious-memset-usage reports.
#include <string.h>

void clear(char* buffer)
{
    memset(buffer, sizeof(int), 0);
}
