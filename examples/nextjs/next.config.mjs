/** @type {import('next').NextConfig} */
export default {
  // The issuer's userinfo is called from a server action; nothing else to configure.
  poweredByHeader: false,
};
