package overrides

import (
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The grammar of image references (distribution's reference package),
// reduced to what the shorthand needs.
var (
	registryRE   = regexp.MustCompile(`^[a-zA-Z0-9]([a-zA-Z0-9.-]*[a-zA-Z0-9])?(:[0-9]+)?$`)
	repositoryRE = regexp.MustCompile(`^[a-z0-9]+([._-][a-z0-9]+|__[a-z0-9]+)*(/[a-z0-9]+([._-][a-z0-9]+|__[a-z0-9]+)*)*$`)
	tagRE        = regexp.MustCompile(`^[\w][\w.-]{0,127}$`)
	digestRE     = regexp.MustCompile(`^sha256:[a-f0-9]{64}$`)
)

func (im *Image) check(p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if im.Registry == "" && im.Repository == "" && im.Tag == "" {
		errs = append(errs, field.Required(p, "one of registry, repository or tag"))
	}
	if im.Registry != "" && !registryRE.MatchString(im.Registry) {
		errs = append(errs, field.Invalid(p.Child("registry"), im.Registry, "a registry host[:port], such as registry.example.com:5000"))
	}
	if im.Repository != "" && !repositoryRE.MatchString(im.Repository) {
		errs = append(errs, field.Invalid(p.Child("repository"), im.Repository, "a repository path of lower-case components, such as team/app"))
	}
	if im.Tag != "" && !tagRE.MatchString(im.Tag) && !digestRE.MatchString(im.Tag) {
		errs = append(errs, field.Invalid(p.Child("tag"), im.Tag, "a tag (letters, digits, '_', '.', '-', at most 128) or a digest sha256:<64 hex>"))
	}
	return errs
}

// imageRef is an image reference in its parts: [registry/]repository
// followed by ":tag" or "@digest" (kept with its separator in suffix).
type imageRef struct {
	registry, repository, suffix string
}

// parseImage splits an image reference as the container runtime reads it:
// the first path component is a registry when it has a '.' or a ':' or is
// localhost.
func parseImage(s string) imageRef {
	var ref imageRef
	if i := strings.Index(s, "@"); i >= 0 {
		s, ref.suffix = s[:i], s[i:]
	} else if i := strings.LastIndex(s, ":"); i > strings.LastIndex(s, "/") {
		s, ref.suffix = s[:i], s[i:]
	}
	if i := strings.Index(s, "/"); i >= 0 {
		first := s[:i]
		if strings.ContainsAny(first, ".:") || first == "localhost" {
			ref.registry, s = first, s[i+1:]
		}
	}
	ref.repository = s
	return ref
}

func (r imageRef) String() string {
	s := r.repository
	if r.registry != "" {
		s = r.registry + "/" + s
	}
	return s + r.suffix
}

// rewrite returns image with the parts im gives replaced.
func (im *Image) rewrite(image string) string {
	ref := parseImage(image)
	if im.Registry != "" {
		ref.registry = im.Registry
	}
	if im.Repository != "" {
		ref.repository = im.Repository
	}
	switch {
	case digestRE.MatchString(im.Tag):
		ref.suffix = "@" + im.Tag
	case im.Tag != "":
		ref.suffix = ":" + im.Tag
	}
	return ref.String()
}
