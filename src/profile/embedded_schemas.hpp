#pragma once
// The schema files of schemas/, compiled into the binary (generated: embedded_schemas.cpp).

namespace commgauge::profile::embedded {
extern const char* const kLinkParamsSchema;
extern const char* const kProfileSchema;
}  // namespace commgauge::profile::embedded
