// 01_open.c: open a device, see what it is, close it.
#include <stdio.h>

#include <vyre/vyre.h>

int main(void) {
  vyre_error err = {.struct_size = sizeof err};
  vyre_device *dev = NULL;
  // NULL, NULL: VYRE_BACKEND / VYRE_DEVICE when set, else the best device
  // (a GPU first, the CPU reference when no GPU serves).
  if (vyre_device_open(NULL, NULL, &dev, &err) != VYRE_STATUS_OK) {
    fprintf(stderr, "open: %s\n", err.message);
    return 1;
  }
  vyre_caps caps = {.struct_size = sizeof caps};
  if (vyre_device_caps(dev, &caps, &err) != VYRE_STATUS_OK) {
    fprintf(stderr, "caps: %s\n", err.message);
    vyre_device_close(dev);
    return 1;
  }
  printf("backend %s, device '%s' (%s)\n", vyre_device_backend_name(dev), caps.device_name,
         vyre_device_selection_reason(dev));
  vyre_device_close(dev);
  return 0;
}
