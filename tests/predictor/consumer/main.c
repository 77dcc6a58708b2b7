/* Asks the installed libsfcconf, from C, for one shape (built with the flags
 * pkg-config gives). */
#include <sfcconf.h>
#include <stdio.h>

int main(void) {
  sfcconf_handle* conf = NULL;
  sfcconf_answer a;
  if (sfcconf_open(NULL, NULL, &conf) != SFCCONF_OK ||
      sfcconf_query(conf, 512, 512, 512, SFCCONF_F32, 2, &a) != SFCCONF_OK) {
    fprintf(stderr, "%s\n", sfcconf_last_error());
    return 1;
  }
  printf("k_layers=%d k_block_factor=%d tier=%s\n", a.k_layers, a.k_block_factor, sfcconf_tier_name(a.tier));
  sfcconf_close(conf);
  return 0;
}
