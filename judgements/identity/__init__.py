"""Sign-in with the organisation's OpenID Connect provider (docs/sign-in.md): the provider
(provider.py), the people and teams its ID tokens make (people.py), and passwords turned
off but for a break-glass superuser (passwords.py). The pages are web/sign_in_pages.py."""
