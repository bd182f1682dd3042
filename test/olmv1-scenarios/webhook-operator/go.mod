module binnacle.dev/test/olmv1-scenarios/webhook-operator

go 1.22
