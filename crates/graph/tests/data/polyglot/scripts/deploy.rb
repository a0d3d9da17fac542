# Deploys a release.
def deploy(target, dry_run: false)
  notify_team(target)
end

def notify_team(target)
  puts "deploying to #{target}"
end
