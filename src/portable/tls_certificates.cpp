// gpusage-portable carries OpenSSL (for `run --notify-url https://...`), built by Debian to look for CA
// certificates under /usr/lib/ssl (cert.pem and certs/, links into /etc/ssl/certs). Fedora, RHEL and openSUSE
// keep their bundle elsewhere. Before main, when neither $SSL_CERT_FILE nor $SSL_CERT_DIR is set and Debian's
// locations are absent, $SSL_CERT_FILE names the first bundle that exists (OpenSSL's
// SSL_CTX_set_default_verify_paths, which cpp-httplib's client calls, reads it). Nothing else changes.
#include <unistd.h>

#include <cstdlib>
#include <initializer_list>

namespace gpusage::portable {

namespace {

[[gnu::constructor]] void point_openssl_at_system_certificates() {
  if (std::getenv("SSL_CERT_FILE") || std::getenv("SSL_CERT_DIR")) return;
  if (::access("/usr/lib/ssl/cert.pem", R_OK) == 0 || ::access("/usr/lib/ssl/certs", R_OK) == 0) return;
  // Debian/Ubuntu/Arch/Alpine, Fedora/RHEL (ca-certificates' extracted bundle and its link), openSUSE.
  for (const char* bundle : {"/etc/ssl/certs/ca-certificates.crt", "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
                             "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/ca-bundle.pem", "/etc/ssl/cert.pem"}) {
    if (::access(bundle, R_OK) == 0) {
      ::setenv("SSL_CERT_FILE", bundle, 0);
      return;
    }
  }
}

}  // namespace

}  // namespace gpusage::portable
