"""Channel posts: secrets, the message per service, sending (apprise; httpx for webhooks), and
each channel's health."""
