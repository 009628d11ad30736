# Doxygen's input filter for tensordict.h: the member files its class body includes
# (#include "tensordict/members/X.inc") are read in place, so that the reference documents their
# members as TensorDict's. Run as `awk -f doxygen_member_files.awk <header>`.
/^#include "tensordict\/members\/[a-z_]+\.inc"/ {
  dir = FILENAME
  sub(/[^\/]*$/, "", dir)
  part = $2
  gsub(/"/, "", part)
  sub(/^tensordict\//, "", part)
  while ((getline line < (dir part)) > 0) print line
  close(dir part)
  next
}
{ print }
